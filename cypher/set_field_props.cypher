// Update properties of existing fields (removed, ambiguous, candidates). $rows: [{urn, props}]
UNWIND $rows AS row
MATCH (f:DatasetField {urn: row.urn})
SET f += row.props
