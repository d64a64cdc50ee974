// The fields of datasets whose tags and terms set in DataHub's UI or API (editableLabels, JSON) may name a label
// ($needle: the label as a JSON string); which of them it names is read from editableLabels by field path.
MATCH (d:Dataset)
WHERE d.editableLabels CONTAINS $needle
MATCH (d)-[:HasField]->(f:DatasetField)
RETURN f.urn AS urn, f.simplePath AS simplePath, d.editableLabels AS editableLabels
