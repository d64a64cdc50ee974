// Move the renames from a resolved placeholder field (it was the new name) to the real field. $rows: [{from, to}]
UNWIND $rows AS row
MATCH (p:DatasetField {urn: row.from})-[e:RenamedFrom]->(o)
MATCH (t:DatasetField {urn: row.to})
MERGE (t)-[n:RenamedFrom {validFrom: e.validFrom}]->(o)
SET n += properties(e)
DELETE e
