// FalkorDB: the graph's indexes (label and properties), read before creating those schema_falkordb names.
CALL db.indexes() YIELD label, properties RETURN label, properties
