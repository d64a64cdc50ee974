// Move the past incoming lineage edges of a resolved placeholder field to the real field. $rows: [{from, to}]
UNWIND $rows AS row
MATCH (x:DatasetField)-[e:PreviouslyDerivedFrom]->(p:DatasetField {urn: row.from})
MATCH (t:DatasetField {urn: row.to})
CREATE (x)-[n:PreviouslyDerivedFrom]->(t)
SET n = properties(e)
DELETE e
