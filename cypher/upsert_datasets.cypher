// Create or update datasets. $rows: [{urn, props}]
UNWIND $rows AS row
MERGE (d:Dataset {urn: row.urn})
SET d += row.props
