// Placeholder datasets for references to datasets not yet known. $rows: [{urn, props}]
UNWIND $rows AS row
MERGE (d:Dataset {urn: row.urn})
ON CREATE SET d += row.props
