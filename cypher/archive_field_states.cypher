// A newer schema changes fields' states: the state each field leaves becomes a FieldState node holding it over
// [validFrom, validTo), and the field's present state starts (`since`) at the new version's time.
// $rows: [{urn, at, stateKey, removed}] (stateKey null: only `removed` changes)
UNWIND $rows AS row
MATCH (f:DatasetField {urn: row.urn})
WHERE f.stateKey IS NOT NULL AND coalesce(f.since, 0) < row.at
  AND (coalesce(f.removed, false) <> row.removed OR (row.stateKey IS NOT NULL AND f.stateKey <> row.stateKey))
CREATE (f)-[:HadState]->(:FieldState {validFrom: coalesce(f.since, 0), validTo: row.at, removed: coalesce(f.removed, false),
        stateKey: f.stateKey, type: f.type, nativeDataType: f.nativeDataType, nullable: f.nullable,
        description: f.description, isPartOfKey: f.isPartOfKey, tags: f.tags, glossaryTerms: f.glossaryTerms})
SET f.since = row.at
