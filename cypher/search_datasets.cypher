// Datasets whose name (or URN) contains $q, lower-cased by the caller; placeholders (datasets only referenced) too.
MATCH (d:Dataset)
WHERE toLower(d.name) CONTAINS $q OR toLower(d.urn) CONTAINS $q
WITH d ORDER BY d.name, d.urn LIMIT $limit
OPTIONAL MATCH (d)-[:HasField]->(f:DatasetField)
WHERE coalesce(f.placeholder, false) = false AND coalesce(f.removed, false) = false
RETURN d.urn AS urn, d.name AS name, d.platform AS platform, coalesce(d.placeholder, false) AS placeholder,
       count(f) AS fields
ORDER BY name, urn
