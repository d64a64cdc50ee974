// DataHub query entities' statements (queryProperties); a query keeps its newest statement (ts).
// $rows: [{urn, statement, language, ts}]
UNWIND $rows AS row
MERGE (q:Query {urn: row.urn})
WITH q, row
WHERE q.ts IS NULL OR q.ts <= row.ts
SET q.statement = row.statement, q.language = row.language, q.ts = row.ts
