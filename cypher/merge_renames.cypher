// Renames: (new)-[:RenamedFrom {validFrom}]->(old), the field `old` called `new` from validFrom (a schema version
// that states it, a SQL RENAME, an explicit rename). One edge per (new, old, validFrom): replays change nothing.
// $rows: [{new, old, validFrom, props}]
UNWIND $rows AS row
MATCH (n:DatasetField {urn: row.new})
MATCH (o:DatasetField {urn: row.old})
MERGE (n)-[r:RenamedFrom {validFrom: row.validFrom}]->(o)
SET r += row.props
