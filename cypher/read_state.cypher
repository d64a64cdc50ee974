// What the planner needs to know about datasets before writing: version stamps, fields, aspect version times.
// $urns: [datasetUrn]. One row per dataset:
// [urn, placeholder, schemaVersion, schemaTs, upstreamLineageTs, datasetUpstreamLineageTs,
//  [[urn, fieldPath, placeholder, removed, schemaVersion, schemaTs, refPath, position, fieldId, aliases, column], ...],
//  schemaTimes, upstreamLineageTimes, datasetUpstreamLineageTimes, jobLineageDeletes]
UNWIND $urns AS urn
MATCH (d:Dataset {urn: urn})
OPTIONAL MATCH (d)-[:HasField]->(f:DatasetField)
WITH d, collect([f.urn, f.fieldPath, f.placeholder, f.removed, f.schemaVersion, f.schemaTs, f.refPath, f.position,
                   f.fieldId, f.aliases, f.column]) AS fields
RETURN [d.urn, d.placeholder, d.schemaVersion, d.schemaTs, d.upstreamLineageTs, d.datasetUpstreamLineageTs,
        fields, d.schemaTimes, d.upstreamLineageTimes, d.datasetUpstreamLineageTimes, d.jobLineageDeletes] AS state
