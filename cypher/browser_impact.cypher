// Neo4j Browser: draws the impact of dataset $urn: its fields, every field derived from them (to depth 10)
// and the datasets those fields belong to (HasField); q is null for a field with no dataset node.
// Needs: :param urn => 'urn:li:dataset:(urn:li:dataPlatform:PLATFORM,NAME,ENV)'
// Runs on both backends.
MATCH p = (s:Dataset {urn: $urn})-[:HasField]->(:DatasetField)<-[:DataDerivedFrom*1..10]-(d:DatasetField)
OPTIONAL MATCH q = (:Dataset)-[:HasField]->(d)
RETURN p, q
