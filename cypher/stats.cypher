// Counts for `fieldgraph stats`: one statement per count. Placeholders count when they hold now (a lineage edge
// that holds now refers to them, or a job declared them); those only past edges refer to are kept for as-of.
MATCH (d:Dataset) RETURN count(d) AS datasets;
MATCH (d:Dataset {placeholder: true})
WHERE ()-[:DataDerivedFrom]->(d) OR (d)-[:HasField]->(:DatasetField)-[:DataDerivedFrom]-()
   OR (d)-[:HasField]->(:DatasetField {declared: true})
RETURN count(d) AS placeholderDatasets;
MATCH (f:DatasetField) RETURN count(f) AS fields;
MATCH (f:DatasetField {removed: true}) RETURN count(f) AS removedFields;
MATCH (f:DatasetField {placeholder: true}) WHERE (f)-[:DataDerivedFrom]-() OR f.declared = true
RETURN count(f) AS placeholderFields;
MATCH (f:DatasetField {placeholder: true, ambiguous: true}) WHERE (f)-[:DataDerivedFrom]-() OR f.declared = true
RETURN count(f) AS ambiguousReferences;
MATCH (:Dataset)-[e:HasField]->(:DatasetField) RETURN count(e) AS hasFieldEdges;
MATCH ()-[e:DataDerivedFrom]->() RETURN count(e) AS dataDerivedFromEdges;
MATCH ()-[e:PreviouslyDerivedFrom]->() RETURN count(e) AS pastDataDerivedFromEdges;
MATCH (s:FieldState) RETURN count(s) AS pastFieldStates;
MATCH ()-[e:RenamedFrom]->() RETURN count(e) AS renames
