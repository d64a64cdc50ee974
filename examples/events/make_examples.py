"""Regenerate the example events (python examples/events/make_examples.py). The scenario:

1. Kafka topic ``demo.orders`` with Avro key and value schemas (MCP, KafkaSchema, no ``fields``:
   fieldgraph normalizes the schemas).
2. Derived table ``/demo/fact_orders`` on HDFS (legacy MCE snapshot: SchemaMetadata with fields,
   and the RFC's DatasetUpstreamLineage with slash paths; identity transformations).
3. Warehouse table ``analytics.public.orders_daily`` on Snowflake (MCL: schema with column
   fields, upstreamLineage fineGrainedLineages; identity and black-box (SUM) transformations).
4. Report ``sales.revenue_report`` on Tableau: its lineage event arrives before its schema.
5. A schema change of ``/demo/fact_orders`` that removes ``restaurant``.
"""

import json
from pathlib import Path

HERE = Path(__file__).parent
ORDERS = (HERE.parent / "schemas" / "orders.avsc").read_text()
KEY = (HERE.parent / "schemas" / "orders_key.avsc").read_text().strip()

KAFKA = "urn:li:dataset:(urn:li:dataPlatform:kafka,demo.orders,PROD)"
FACT = "urn:li:dataset:(urn:li:dataPlatform:hdfs,/demo/fact_orders,PROD)"
DAILY = "urn:li:dataset:(urn:li:dataPlatform:snowflake,analytics.public.orders_daily,PROD)"
REPORT = "urn:li:dataset:(urn:li:dataPlatform:tableau,sales.revenue_report,PROD)"
T0 = 1735689600000  # 2025-01-01


def mcp(urn, aspect_name, aspect, ts, change="UPSERT", cls=None):
    return {"entityType": "dataset", "entityUrn": urn, "changeType": change, "aspectName": aspect_name,
            "aspect": {"value": json.dumps(aspect), "contentType": "application/json"},
            "systemMetadata": {"lastObserved": ts, "runId": "examples"}}


def mcl(urn, aspect_name, aspect, ts):
    out = mcp(urn, aspect_name, aspect, ts)
    out["created"] = {"time": ts, "actor": "urn:li:corpuser:etl"}
    out["previousAspectValue"] = None
    return out


def col(path, typ, native, nullable=False, desc=None, ns="com.linkedin.schema"):
    f = {"fieldPath": path, "nullable": nullable, "type": {"type": {f"{ns}.{typ}": {}}}, "nativeDataType": native,
         "recursive": False, "isPartOfKey": False}
    if desc:
        f["description"] = desc
    return f


def field(ds, path):
    return f"urn:li:schemaField:({ds},{path})"


def rfc_field(ds, path):
    return {"string": f"urn:li:datasetField:({ds},{path})"}


def schema(name, platform, version, fields, ts, raw="", ns="com.linkedin.schema"):
    return {"schemaName": name, "platform": f"urn:li:dataPlatform:{platform}", "version": version,
            "created": {"time": ts, "actor": "urn:li:corpuser:etl"},
            "lastModified": {"time": ts, "actor": "urn:li:corpuser:etl"}, "hash": "",
            "platformSchema": {f"{ns}.OtherSchema": {"rawSchema": raw}}, "fields": fields}


# 1. Kafka topic (MCP, JSON Lines)
kafka = mcp(KAFKA, "schemaMetadata", {
    "schemaName": "demo.orders", "platform": "urn:li:dataPlatform:kafka", "version": 0,
    "created": {"time": T0, "actor": "urn:li:corpuser:kafka"},
    "lastModified": {"time": T0, "actor": "urn:li:corpuser:kafka"},
    "hash": "",
    "platformSchema": {"com.linkedin.schema.KafkaSchema": {"documentSchema": ORDERS, "documentSchemaType": "AVRO",
                                                            "keySchema": KEY, "keySchemaType": "AVRO"}},
}, T0)

def identity(source_path, destination_path):
    """An RFC field mapping from the Kafka topic to fact_orders, in the RFC's Avro-JSON union form."""
    return {"created": None,
            "transformationFunction": {"string": "com.linkedin.finegrainedmetadata.transformation.Identity"},
            "sourceFields": [rfc_field(KAFKA, source_path)],
            "destinationField": f"urn:li:datasetField:({FACT},{destination_path})"}


# 2. Derived HDFS table (legacy MCE snapshot, pegasus2avro namespaces; RFC lineage with slash paths)
P2A = "com.linkedin.pegasus2avro.schema"
fact_fields = [col("customerId", "StringType", "string", ns=P2A), col("timeStamp", "TimeType", "long", ns=P2A),
               col("restaurant", "StringType", "string", ns=P2A), col("sku", "StringType", "string", ns=P2A),
               col("quantity", "NumberType", "int", ns=P2A), col("price", "NumberType", "decimal(9,2)", ns=P2A)]
fact_mce = {"proposedSnapshot": {"com.linkedin.pegasus2avro.metadata.snapshot.DatasetSnapshot": {
    "urn": FACT,
    "aspects": [
        {f"{P2A}.SchemaMetadata": schema("fact_orders", "hdfs", 1, fact_fields, T0 + 1000, ns=P2A)},
        {"com.linkedin.pegasus2avro.dataset.DatasetUpstreamLineage": {"fieldMappings": [
            identity("/header/customerId", "/customerId"),
            identity("/header/timeStamp", "/timeStamp"),
            # `restaurant` is in both the key and the value schema of the topic: an ambiguous reference
            identity("/restaurant", "/restaurant"),
            identity("/items/sku", "/sku"),
            identity("/items/quantity", "/quantity"),
            identity("/items/price", "/price"),
        ]}},
    ]}}, "systemMetadata": {"lastObserved": T0 + 1000}}

# 3. Snowflake table (MCL) with fine-grained lineage
daily_fields = [col("customer_id", "StringType", "VARCHAR(64)", desc="The ordering customer"),
                col("order_day", "DateType", "DATE"), col("order_count", "NumberType", "NUMBER(18,0)"),
                col("revenue", "NumberType", "NUMBER(18,2)", desc="Sum of quantity * price")]
daily_schema = mcl(DAILY, "schemaMetadata", schema("analytics.public.orders_daily", "snowflake", 0, daily_fields,
                                                   T0 + 2000), T0 + 2000)
daily_lineage = mcl(DAILY, "upstreamLineage", {
    "upstreams": [{"dataset": FACT, "type": "TRANSFORMED",
                   "auditStamp": {"time": T0 + 2000, "actor": "urn:li:corpuser:etl"}}],
    "fineGrainedLineages": [
        {"upstreamType": "FIELD_SET", "upstreams": [field(FACT, "customerId")], "downstreamType": "FIELD",
         "downstreams": [field(DAILY, "customer_id")], "transformOperation": "IDENTITY", "confidenceScore": 1.0},
        {"upstreamType": "FIELD_SET", "upstreams": [field(FACT, "timeStamp")], "downstreamType": "FIELD",
         "downstreams": [field(DAILY, "order_day")], "transformOperation": "DATE_TRUNC", "confidenceScore": 0.9,
         "query": "urn:li:query:orders_daily"},
        {"upstreamType": "FIELD_SET", "upstreams": [field(FACT, "sku")], "downstreamType": "FIELD",
         "downstreams": [field(DAILY, "order_count")], "transformOperation": "COUNT", "confidenceScore": 1.0},
        {"upstreamType": "FIELD_SET", "upstreams": [field(FACT, "quantity"), field(FACT, "price")],
         "downstreamType": "FIELD", "downstreams": [field(DAILY, "revenue")], "transformOperation": "SUM",
         "confidenceScore": 1.0, "query": "urn:li:query:orders_daily"},
    ]}, T0 + 2000)

# 4. Report: lineage first (v1 column names), then its schema
report_lineage = mcp(REPORT, "upstreamLineage", {
    "upstreams": [{"dataset": DAILY, "type": "TRANSFORMED"}],
    "fineGrainedLineages": [
        {"upstreamType": "FIELD_SET", "upstreams": [field(DAILY, "customer_id")], "downstreamType": "FIELD",
         "downstreams": [field(REPORT, "customer")], "transformOperation": "IDENTITY"},
        {"upstreamType": "FIELD_SET", "upstreams": [field(DAILY, "revenue"), field(DAILY, "order_day")],
         "downstreamType": "FIELD", "downstreams": [field(REPORT, "total_revenue")],
         "transformOperation": "BLACKBOX", "confidenceScore": 0.8},
    ]}, T0 + 3000)
report_schema = mcp(REPORT, "schemaMetadata", schema("sales.revenue_report", "tableau", 0, [
    col("customer", "StringType", "string"), col("total_revenue", "NumberType", "number", desc="Revenue per customer"),
], T0 + 4000), T0 + 4000)

# 5. fact_orders v2 drops `restaurant`
fact_v2_fields = [f for f in fact_fields if f["fieldPath"] != "restaurant"]
fact_v2 = mcp(FACT, "schemaMetadata", schema("fact_orders", "hdfs", 2, fact_v2_fields, T0 + 5000, ns=P2A), T0 + 5000)
for _f in json.loads(fact_v2["aspect"]["value"])["fields"]:
    pass

(HERE / "01_kafka_orders.json").write_text(json.dumps(kafka, indent=2) + "\n")
(HERE / "02_fact_orders.mce.json").write_text(json.dumps([fact_mce], indent=2) + "\n")
(HERE / "03_orders_daily.mcl.jsonl").write_text("".join(json.dumps(e) + "\n" for e in (daily_schema, daily_lineage)))
(HERE / "04_report_lineage_before_schema.jsonl").write_text(json.dumps(report_lineage) + "\n")
(HERE / "05_report_schema.jsonl").write_text(json.dumps(report_schema) + "\n")
(HERE / "06_fact_orders_v2_drops_restaurant.json").write_text(json.dumps(fact_v2, indent=2) + "\n")
print("wrote", sorted(p.name for p in HERE.glob("0*")))
