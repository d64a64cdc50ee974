// Fields that carried a tag or term of their own at $asOf (ms since the epoch): the schema's then (present state
// since `since`, or the past state that held then) or set by hand (manualTags, localTags: as now). $rows: [{tag, term}]
UNWIND $rows AS row
MATCH (f:DatasetField)
OPTIONAL MATCH (f)-[:HadState]->(h:FieldState)
WHERE h.validFrom <= $asOf AND h.validTo > $asOf
WITH row, f, CASE WHEN coalesce(f.placeholder, false) THEN null
                  WHEN coalesce(f.since, 0) <= $asOf THEN f ELSE h END AS s,
     coalesce(f.manualTags, []) + coalesce(f.localTags, []) AS hand
WHERE row.tag IN coalesce(s.tags, []) OR row.term IN coalesce(s.glossaryTerms, [])
   OR row.tag IN hand OR ('urn:li:glossaryTerm:' + row.term) IN hand
RETURN DISTINCT f.urn AS urn
ORDER BY urn
