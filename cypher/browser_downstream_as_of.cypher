// Neo4j Browser: draws the downstream lineage of field $urn as it was at $asOf (ms since the epoch), to depth 10.
// Needs: :param urn => 'urn:li:datasetField:(...)' and :param asOf => datetime('2025-01-01T00:00:03Z').epochMillis
// Runs on both backends.
MATCH p = (f:DatasetField {urn: $urn})<-[:DataDerivedFrom|PreviouslyDerivedFrom*1..10]-(d:DatasetField)
WHERE all(e IN relationships(p) WHERE coalesce(e.validFrom, 0) <= $asOf AND (e.validTo IS NULL OR e.validTo > $asOf))
RETURN p
