// Move the past outgoing lineage edges of a resolved placeholder field to the real field. $rows: [{from, to}]
UNWIND $rows AS row
MATCH (p:DatasetField {urn: row.from})-[e:PreviouslyDerivedFrom]->(u)
MATCH (t:DatasetField {urn: row.to})
CREATE (t)-[n:PreviouslyDerivedFrom]->(u)
SET n = properties(e)
DELETE e
