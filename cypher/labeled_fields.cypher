// Fields that carry a tag or term of their own: the schema's or set by hand (manualTags, localTags).
// $rows: [{tag, term}] (tag name, glossary term name)
UNWIND $rows AS row
MATCH (f:DatasetField)
WITH row, f, coalesce(f.manualTags, []) + coalesce(f.localTags, []) AS hand
WHERE row.tag IN coalesce(f.tags, []) OR row.term IN coalesce(f.glossaryTerms, [])
   OR row.tag IN hand OR ('urn:li:glossaryTerm:' + row.term) IN hand
RETURN DISTINCT f.urn AS urn
ORDER BY urn
