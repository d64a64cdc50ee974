// Own tags and glossary terms of fields: from the schema (tags, glossaryTerms) and set by hand (manualTags);
// droppedBy: the jobs that drop the field.
UNWIND $frontier AS urn
MATCH (f:DatasetField {urn: urn})
RETURN f.urn AS urn, f.datasetUrn AS datasetUrn, f.fieldPath AS fieldPath, f.tags AS tags,
       f.glossaryTerms AS glossaryTerms, f.manualTags AS manualTags, f.droppedBy AS droppedBy
