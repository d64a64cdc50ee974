// Own tags and glossary terms of fields: from the schema (tags, glossaryTerms), set by hand (manualTags, which
// propagate; localTags, which stay on the field) and set in DataHub's UI or API (their dataset's editableLabels,
// by field path: simplePath matches them); droppedBy: the jobs that drop the field.
UNWIND $frontier AS urn
MATCH (f:DatasetField {urn: urn})
OPTIONAL MATCH (d:Dataset {urn: f.datasetUrn})
RETURN f.urn AS urn, f.datasetUrn AS datasetUrn, f.fieldPath AS fieldPath, f.simplePath AS simplePath, f.tags AS tags,
       f.glossaryTerms AS glossaryTerms, f.manualTags AS manualTags, f.localTags AS localTags,
       d.editableLabels AS editableLabels, f.droppedBy AS droppedBy
