// The tags and glossary terms set on a dataset's fields in DataHub's UI or API (editableSchemaMetadata), kept on
// the dataset as DataHub keeps them, unless the graph holds a newer version. An unstamped delete is newer than
// what the graph holds (it keeps the newer stamp). $rows: [{urn, ts, unstamped, labels}]
// (labels: JSON [[fieldPath, [label, ...]], ...]; null: none)
UNWIND $rows AS row
MATCH (d:Dataset {urn: row.urn})
WITH d, row
WHERE row.unstamped OR coalesce(d.editableTs, -1) <= row.ts
SET d.editableLabels = row.labels,
    d.editableTs = CASE WHEN coalesce(d.editableTs, -1) > row.ts THEN d.editableTs ELSE row.ts END
