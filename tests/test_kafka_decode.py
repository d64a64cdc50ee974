"""Message values: JSON, and Avro in the Confluent wire format with local .avsc schemas."""

from __future__ import annotations

import json

import pytest

from fieldgraph.ingest.decode import MessageDecodeError, RegistryUnavailable, ValueDecoder, encode_avro
from fieldgraph.ingest.sources import decode_event

ORDERS = "urn:li:dataset:(urn:li:dataPlatform:kafka,demo.orders,PROD)"

# The fields of DataHub's MetadataChangeProposal Avro record that fieldgraph reads.
MCP_SCHEMA = {
    "type": "record",
    "name": "MetadataChangeProposal",
    "namespace": "com.linkedin.pegasus2avro.mxe",
    "fields": [
        {"name": "entityType", "type": "string"},
        {"name": "entityUrn", "type": ["null", "string"], "default": None},
        {"name": "changeType", "type": {"type": "enum", "name": "ChangeType",
                                        "symbols": ["UPSERT", "CREATE", "UPDATE", "DELETE", "PATCH", "RESTATE"]}},
        {"name": "aspectName", "type": ["null", "string"], "default": None},
        {"name": "aspect", "type": ["null", {"type": "record", "name": "GenericAspect", "fields": [
            {"name": "value", "type": "bytes"}, {"name": "contentType", "type": "string"}]}], "default": None},
    ],
}


def schema_mcp() -> dict:
    aspect = {"schemaName": "demo.orders", "platform": "urn:li:dataPlatform:kafka", "version": 3,
              "hash": "", "platformSchema": {"com.linkedin.schema.OtherSchema": {"rawSchema": ""}},
              "fields": [{"fieldPath": "[version=2.0].[type=Order].[type=long].id", "nullable": False,
                          "type": {"type": {"com.linkedin.schema.NumberType": {}}}, "nativeDataType": "long"}]}
    return {"entityType": "dataset", "entityUrn": ORDERS, "changeType": "UPSERT", "aspectName": "schemaMetadata",
            "aspect": {"value": json.dumps(aspect).encode(), "contentType": "application/json"}}


@pytest.fixture
def avsc(tmp_path):
    path = tmp_path / "MetadataChangeProposal.avsc"
    path.write_text(json.dumps(MCP_SCHEMA))
    return path


def test_wire_format_avro_with_a_local_schema_becomes_an_event(avsc):
    value = encode_avro(schema_mcp(), MCP_SCHEMA, schema_id=42)
    assert value[0] == 0 and int.from_bytes(value[1:5], "big") == 42
    obj = ValueDecoder(avsc=[avsc]).decode(value, topic="MetadataChangeProposal_v1")
    assert obj["changeType"] == "UPSERT" and obj["entityUrn"] == ORDERS
    (change,) = decode_event(obj)
    assert change.dataset == ORDERS and change.aspect == "schemaMetadata"


def test_schema_file_named_by_id_wins(tmp_path, avsc):
    by_id = tmp_path / "ids"
    by_id.mkdir()
    (by_id / "7.avsc").write_text(json.dumps(MCP_SCHEMA))
    value = encode_avro(schema_mcp(), MCP_SCHEMA, schema_id=7)
    assert ValueDecoder(avsc=[by_id]).decode(value, topic="anything")["entityType"] == "dataset"


def test_json_values_pass_through():
    assert ValueDecoder().decode(b'{"a": 1}') == {"a": 1}


@pytest.mark.parametrize(
    "value,kind",
    [
        (b"", "empty"),
        (b"{not json", "json"),
        (b"\x00\x00\x00\x00\x05\x02", "schema"),  # Avro, but no schema configured
    ],
)
def test_bad_values_name_their_kind(value, kind):
    with pytest.raises(MessageDecodeError) as info:
        ValueDecoder().decode(value, topic="MetadataChangeProposal_v1")
    assert info.value.kind == kind and info.value.reason


def test_avro_body_that_does_not_match_its_schema(avsc):
    with pytest.raises(MessageDecodeError, match="does not match schema id 42") as info:
        ValueDecoder(avsc=[avsc]).decode(b"\x00\x00\x00\x00\x2a\xff\xff\xff", topic="MetadataChangeProposal_v1")
    assert info.value.kind == "avro"


def test_a_registry_that_is_down_is_not_bad_input():
    from .services import free_port

    port = free_port()  # a port nobody listens on
    decoder = ValueDecoder(registry_url=f"http://127.0.0.1:{port}")
    with pytest.raises(RegistryUnavailable):
        decoder.decode(encode_avro(schema_mcp(), MCP_SCHEMA, schema_id=1), topic="MetadataChangeProposal_v1")


def test_datahub_avro_snapshots_read_as_their_json_form(tmp_path):
    """An MCE in DataHub's own Avro schema (its snapshot and aspects are unions of records) decodes to the
    changes its JSON form gives."""
    m = pytest.importorskip("datahub.metadata.schema_classes")
    from datahub.metadata.schemas import getMetadataChangeEventSchema

    avsc = tmp_path / "MetadataChangeEvent.avsc"
    avsc.write_text(getMetadataChangeEventSchema())
    up = "urn:li:dataset:(urn:li:dataPlatform:kafka,demo.raw,PROD)"
    schema = m.SchemaMetadataClass(
        schemaName="orders", platform="urn:li:dataPlatform:kafka", version=2, hash="",
        platformSchema=m.OtherSchemaClass(rawSchema=""),
        fields=[m.SchemaFieldClass(fieldPath="id", type=m.SchemaFieldDataTypeClass(m.NumberTypeClass()),
                                   nativeDataType="long")])
    lineage = m.UpstreamLineageClass(upstreams=[m.UpstreamClass(dataset=up, type="TRANSFORMED")], fineGrainedLineages=[
        m.FineGrainedLineageClass(upstreamType="FIELD_SET", upstreams=[f"urn:li:schemaField:({up},id)"],
                                  downstreamType="FIELD", downstreams=[f"urn:li:schemaField:({ORDERS},id)"])])
    mce = m.MetadataChangeEventClass(proposedSnapshot=m.DatasetSnapshotClass(
        urn=ORDERS, aspects=[schema, lineage, m.StatusClass(removed=False)]))
    value = encode_avro(mce.to_obj(tuples=True), json.loads(getMetadataChangeEventSchema()), schema_id=3)
    from_avro = decode_event(ValueDecoder(avsc=[avsc]).decode(value, topic="MetadataChangeEvent_v4"))
    assert from_avro == decode_event(json.loads(json.dumps(mce.to_obj())))
    assert [type(c).__name__ for c in from_avro] == ["SchemaChange", "LineageChange"]
