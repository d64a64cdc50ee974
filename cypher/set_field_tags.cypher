// Add or remove tags and terms set by hand (`fieldgraph tag`), kept apart from the schema's. $rows: [{urn, add, remove}]
UNWIND $rows AS row
MATCH (f:DatasetField {urn: row.urn})
WITH f, row, [t IN coalesce(f.manualTags, []) WHERE NOT t IN row.remove] AS kept
SET f.manualTags = kept + [t IN row.add WHERE NOT t IN kept]
RETURN f.urn AS urn, f.manualTags AS manualTags
