"""The official OpenLineage Spark integration (``io.openlineage:openlineage-spark_2.13`` from Maven Central,
``deploy/maven/openlineage-spark``) on PySpark in local mode, its HTTP transport posting to ``fieldgraph serve`` on
each backend, configured as docs/how-to/openlineage.md ("Spark") says: a ``CREATE TABLE AS SELECT``'s column lineage
lands in the graph, every column from the column it reads, with the kind of transformation the listener saw."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from fieldgraph.graph.plan import field_urn

from .services import classpath, fieldgraph_serve

pytestmark = pytest.mark.integration

TOKEN = "spark-listener-token-0123456789"
JOB = Path(__file__).resolve().parent / "openlineage_spark_job.py"


@pytest.fixture(scope="module")
def listener_jars() -> str:
    return classpath("openlineage-spark").replace(":", ",")


def test_a_spark_ctas_lands_its_column_lineage_in_the_graph(graph, listener_jars: str, tmp_path: Path) -> None:
    warehouse = tmp_path / "warehouse"
    with fieldgraph_serve(graph.uri, tmp_path, token=TOKEN) as url:
        job = subprocess.run([sys.executable, str(JOB), listener_jars, url, TOKEN, str(warehouse)],
                             capture_output=True, text=True, timeout=600)
        assert job.returncode == 0, job.stderr[-4000:]
    orders = f"urn:li:dataset:(urn:li:dataPlatform:file,{warehouse}/orders,PROD)"
    revenue = f"urn:li:dataset:(urn:li:dataPlatform:file,{warehouse}/revenue,PROD)"
    assert sorted(r.field_path for r in graph.fields(revenue)) == ["doubled", "id", "name_u"]
    for column, read, transformation in (("id", "id", "Identity"), ("doubled", "price", "Transformation"),
                                         ("name_u", "name", "Transformation")):
        hops = graph.upstream(field_urn(revenue, column)).hops
        assert {h.urn for h in hops} == {field_urn(orders, read)}, (column, hops)
        # the listener sends two jobs for the CTAS (its create and its insert command): one hop listing both
        (hop,) = hops
        assert len(hop.edges) == len(hop.sources) == 2, hop.sources
        assert {e["transformation"] for e in hop.edges} == {transformation}
        assert all(s.startswith("openlineage:spark_jobs/revenue_job.") for s in hop.sources)
    impact = graph.impact(field_urn(orders, "price"))
    assert field_urn(revenue, "doubled") in {h.urn for h in impact.walk.hops}
