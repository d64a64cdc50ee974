// The dataJobInputOutput version a DataHub data job holds now: its stamp, and the datasets its edges go into
// (where its next version ends those it does not repeat). $rows: [{urn, ts, outputs}]
UNWIND $rows AS row
MERGE (j:DataJob {urn: row.urn})
SET j.ts = row.ts, j.outputs = row.outputs
