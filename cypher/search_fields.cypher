// Fields whose path (v2 or simple, e.g. items.price) contains $q, lower-cased by the caller; removed fields left out.
MATCH (f:DatasetField)
WHERE coalesce(f.removed, false) = false
  AND (toLower(f.simplePath) CONTAINS $q OR toLower(f.fieldPath) CONTAINS $q)
RETURN f.urn AS urn, f.datasetUrn AS dataset, f.fieldPath AS fieldPath, coalesce(f.simplePath, f.fieldPath) AS simplePath,
       coalesce(f.placeholder, false) AS placeholder
ORDER BY size(simplePath), simplePath, urn
LIMIT $limit
