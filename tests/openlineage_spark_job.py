"""A PySpark job with the official OpenLineage Spark listener, run by ``tests/test_openlineage_spark.py`` in a process
(and so a JVM) of its own: the listener's jar must be on the driver's classpath when the JVM starts.

    python tests/openlineage_spark_job.py JARS URL TOKEN WAREHOUSE

writes a table ``orders`` and then ``CREATE TABLE revenue AS SELECT id, price * 2 AS doubled, upper(name) AS name_u
FROM orders`` in WAREHOUSE, the listener posting each run event to URL (``fieldgraph serve``) with TOKEN as its api
key, exactly as docs/how-to/openlineage.md ("Spark") configures it. Stopping the session drains the listener."""

from __future__ import annotations

import os
import sys

from pyspark.sql import SparkSession


def main(jars: str, url: str, token: str, warehouse: str) -> None:
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    spark = (SparkSession.builder.master("local[1]").appName("revenue_job")
             .config("spark.jars", jars)
             .config("spark.extraListeners", "io.openlineage.spark.agent.OpenLineageSparkListener")
             .config("spark.openlineage.transport.type", "http")
             .config("spark.openlineage.transport.url", url)
             .config("spark.openlineage.transport.auth.type", "api_key")
             .config("spark.openlineage.transport.auth.apiKey", token)
             .config("spark.openlineage.namespace", "spark_jobs")
             .config("spark.sql.warehouse.dir", warehouse)
             .config("spark.ui.enabled", "false")
             .config("spark.ui.showConsoleProgress", "false")
             .getOrCreate())
    try:
        spark.sparkContext.setLogLevel("ERROR")
        spark.createDataFrame([(1, "a", 2.0)], "id INT, name STRING, price DOUBLE").write.saveAsTable("orders")
        spark.sql("CREATE TABLE revenue AS SELECT id, price * 2 AS doubled, upper(name) AS name_u FROM orders")
    finally:
        spark.stop()


if __name__ == "__main__":
    main(*sys.argv[1:5])
