// Neo4j Browser: draws dataset $urn with its fields (HasField), removed fields included.
// Needs: :param urn => 'urn:li:dataset:(urn:li:dataPlatform:PLATFORM,NAME,ENV)'
// Runs on both backends.
MATCH p = (d:Dataset {urn: $urn})-[:HasField]->(f:DatasetField)
RETURN p
