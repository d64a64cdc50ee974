// Add or remove tags and terms set by hand (`fieldgraph tag`), kept apart from the schema's: those that propagate
// downstream (manualTags) and those that stay on the field (localTags, `--no-propagate`). Adding a label puts it in
// the list `local` names (and takes it out of the other); removing takes it out of both.
// $rows: [{urn, add, remove, local}]
UNWIND $rows AS row
MATCH (f:DatasetField {urn: row.urn})
WITH f, row, [t IN coalesce(f.manualTags, []) WHERE NOT t IN row.remove] AS spreading,
     [t IN coalesce(f.localTags, []) WHERE NOT t IN row.remove] AS local
SET f.manualTags = CASE WHEN row.local THEN [t IN spreading WHERE NOT t IN row.add]
                        ELSE spreading + [t IN row.add WHERE NOT t IN spreading] END,
    f.localTags = CASE WHEN row.local THEN local + [t IN row.add WHERE NOT t IN local]
                       ELSE [t IN local WHERE NOT t IN row.add] END
RETURN f.urn AS urn, f.manualTags AS manualTags, f.localTags AS localTags
