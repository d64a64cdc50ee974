// Counts for `fieldgraph stats`: one statement per count.
MATCH (d:Dataset) RETURN count(d) AS datasets;
MATCH (d:Dataset {placeholder: true}) RETURN count(d) AS placeholderDatasets;
MATCH (f:DatasetField) RETURN count(f) AS fields;
MATCH (f:DatasetField {removed: true}) RETURN count(f) AS removedFields;
MATCH (f:DatasetField {placeholder: true}) RETURN count(f) AS placeholderFields;
MATCH (f:DatasetField {placeholder: true, ambiguous: true}) RETURN count(f) AS ambiguousReferences;
MATCH (:Dataset)-[e:HasField]->(:DatasetField) RETURN count(e) AS hasFieldEdges;
MATCH ()-[e:DataDerivedFrom]->() RETURN count(e) AS dataDerivedFromEdges
