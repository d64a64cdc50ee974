// Delete fields (resolved placeholders). $rows: [{urn}]
UNWIND $rows AS row
MATCH (f:DatasetField {urn: row.urn})
DETACH DELETE f
