// Impact of a field or dataset $urn: downstream datasets and fields to depth 10 (for Neo4j Browser).
MATCH (s) WHERE (s:Dataset OR s:DatasetField) AND s.urn = $urn
OPTIONAL MATCH (s)-[:HasField]->(sf:DatasetField)
WITH s, collect(sf) + [s] AS starts
UNWIND starts AS st
MATCH p = (st)<-[:DataDerivedFrom*1..10]-(d:DatasetField)
RETURN d.datasetUrn AS dataset, collect(DISTINCT d.fieldPath) AS fields, min(length(p)) AS distance
ORDER BY distance, dataset
