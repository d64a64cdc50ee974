// Move the renames to a resolved placeholder field (it was the old name) to the real field. $rows: [{from, to}]
UNWIND $rows AS row
MATCH (x:DatasetField)-[e:RenamedFrom]->(p:DatasetField {urn: row.from})
MATCH (t:DatasetField {urn: row.to})
MERGE (x)-[n:RenamedFrom {validFrom: e.validFrom}]->(t)
SET n += properties(e)
DELETE e
