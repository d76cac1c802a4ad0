import RoostCore

/// Parse Server's volatile classes (`SchemaController.volatileClasses`): their schemas are fixed in code, never
/// stored. `GET /schemas/<one of them>` answers the fixed schema with empty class-level permissions, `GET /schemas`
/// lists none of them, and creating one through `/schemas` is 103 `Class <C> already exists.`, as Parse does.
/// Roost keeps `_Audience` as a class (`AudienceRoutes`); the others' machinery it does not have.
enum VolatileSchemas {
    private static let fields: [String: [String: FieldType]] = [
        "_JobStatus": ["jobName": .string, "source": .string, "status": .string, "message": .string, "params": .object, "finishedAt": .date],
        "_PushStatus": [
            "pushTime": .string, "source": .string, "query": .string, "payload": .string, "title": .string, "expiry": .number,
            "expiration_interval": .number, "status": .string, "numSent": .number, "numFailed": .number, "pushHash": .string,
            "errorMessage": .object, "sentPerType": .object, "failedPerType": .object, "sentPerUTCOffset": .object,
            "failedPerUTCOffset": .object, "count": .number,
        ],
        "_Hooks": ["functionName": .string, "className": .string, "triggerName": .string, "url": .string],
        "_GlobalConfig": ["params": .object, "masterKeyOnly": .object],
        "_GraphQLConfig": ["config": .object],
        "_JobSchedule": [
            "jobName": .string, "description": .string, "params": .string, "startAfter": .string, "daysOfWeek": .array,
            "timeOfDay": .string, "lastRun": .number, "repeatMinutes": .number,
        ],
        "_Audience": AudienceRoutes.defaultFields,
        "_Idempotency": ["reqId": .string, "expire": .date],
    ]

    /// The fixed schema of a volatile class; `nil` for any other name.
    static func json(of className: String) -> JSON? {
        guard let own = fields[className] else { return nil }
        let all = ClassSchema.defaultFields.merging(own) { _, own in own }
        return ["className": .string(className), "fields": .object(all.mapValues(\.schemaJSON)), "classLevelPermissions": [:]]
    }
}
