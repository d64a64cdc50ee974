// Neo4j Browser: draws the downstream lineage of field $urn (every field derived from it, to depth 10).
// Needs: :param urn => 'urn:li:datasetField:(urn:li:dataset:(urn:li:dataPlatform:PLATFORM,NAME,ENV),FIELD_PATH)'
// Runs on both backends.
MATCH p = (f:DatasetField {urn: $urn})<-[:DataDerivedFrom*1..10]-(d:DatasetField)
RETURN p
