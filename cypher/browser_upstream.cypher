// Neo4j Browser: draws the upstream lineage of field $urn (every DataDerivedFrom path to depth 10).
// Needs: :param urn => 'urn:li:datasetField:(urn:li:dataset:(urn:li:dataPlatform:PLATFORM,NAME,ENV),FIELD_PATH)'
// Runs on both backends.
MATCH p = (f:DatasetField {urn: $urn})-[:DataDerivedFrom*1..10]->(u)
RETURN p
