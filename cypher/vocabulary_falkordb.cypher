// FalkorDB: the names its graph already holds, read before registering the rest up front (the store's
// ensure_schema): its labels, its relationship types and its property keys, one statement each.
CALL db.labels() YIELD label RETURN label;
CALL db.relationshipTypes() YIELD relationshipType RETURN relationshipType;
CALL db.propertyKeys() YIELD propertyKey RETURN propertyKey
