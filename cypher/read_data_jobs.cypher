// Stored DataHub data jobs: the stamp of the dataJobInputOutput version each holds, and the datasets its edges
// go into. $urns: [data job URN]
UNWIND $urns AS urn
MATCH (j:DataJob {urn: urn})
RETURN j.urn AS urn, j.ts AS ts, j.outputs AS outputs
