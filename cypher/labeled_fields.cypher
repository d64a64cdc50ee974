// Fields that carry a tag or term of their own. $rows: [{tag, term}] (tag name, glossary term name)
UNWIND $rows AS row
MATCH (f:DatasetField)
WHERE row.tag IN coalesce(f.tags, []) OR row.term IN coalesce(f.glossaryTerms, [])
   OR row.tag IN coalesce(f.manualTags, []) OR ('urn:li:glossaryTerm:' + row.term) IN coalesce(f.manualTags, [])
RETURN DISTINCT f.urn AS urn
ORDER BY urn
