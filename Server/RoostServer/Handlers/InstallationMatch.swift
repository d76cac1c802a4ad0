import RoostCore

/// Which stored installation a save is about, by Parse Server's `RestWrite.handleInstallation`.
///
/// A device is known by its `installationId`, its push `deviceToken`, or both. A create that names
/// a device already stored becomes an update of it (200), so a reinstalling app or a repeated iOS
/// registration keeps one record; a device token that moved to a new installation is deleted from
/// the old ones. The lookup, the deletions and the save share the caller's transaction.
struct InstallationMatch {
    private struct Stored {
        let objectId: String
        let installationId: String?
        let deviceToken: String?
        let deviceType: String?
        let appIdentifier: String?
    }

    let schema: ClassSchema
    let db: any SQLConnection

    /// Normalises the body's ids (an iOS token — 64 characters — and `installationId` are
    /// lowercased), applies Parse's checks and deletions, and returns the objectId the save must
    /// update: `objectId` for a `PUT`, a matched installation for a create, `nil` to create one.
    /// - Parameter headerInstallationId: `X-Parse-Installation-Id`, used to match when the body has no id (not for the master key).
    func resolve(_ body: inout [String: JSON], objectId: String?, headerInstallationId: String?) throws -> String? {
        var deviceToken = body["deviceToken"]?.nonEmptyString
        if let token = deviceToken, token.count == 64 {
            deviceToken = token.lowercased()
            body["deviceToken"] = .string(token.lowercased())
        }
        let bodyInstallationId = body["installationId"]?.nonEmptyString?.lowercased()
        if let bodyInstallationId { body["installationId"] = .string(bodyInstallationId) }
        let installationId = bodyInstallationId ?? headerInstallationId?.lowercased()
        if objectId == nil, deviceToken == nil, installationId == nil {
            throw ParseError(.missingRequiredField, "at least one ID field (deviceToken, installationId) must be specified in this operation")
        }
        let deviceType = body["deviceType"]?.nonEmptyString
        if let objectId { try refuseOperations(on: body, of: objectId) }
        // An update that touches none of the identifying fields needs no lookup.
        if objectId != nil, deviceToken == nil, installationId == nil, deviceType == nil { return objectId }

        let matches = try candidates(objectId: objectId, installationId: installationId, deviceToken: deviceToken)
        let objectIdMatch = matches.first { objectId != nil && $0.objectId == objectId }
        let installationIdMatch = matches.first { installationId != nil && $0.installationId == installationId }
        let deviceTokenMatches = matches.filter { deviceToken != nil && $0.deviceToken == deviceToken }

        if objectId != nil {
            guard let stored = objectIdMatch else { throw ParseError(.objectNotFound, "Object not found for update.") }
            if let bodyInstallationId, let storedId = stored.installationId, bodyInstallationId != storedId {
                throw ParseError(.invalidInstallationId, "installationId may not be changed in this operation")
            }
            if let deviceToken, let storedToken = stored.deviceToken, deviceToken != storedToken,
                bodyInstallationId == nil, stored.installationId == nil {
                throw ParseError(.invalidInstallationId, "deviceToken may not be changed in this operation")
            }
            if let deviceType, deviceType != stored.deviceType {
                throw ParseError(.invalidInstallationId, "deviceType may not be changed in this operation")
            }
        }
        guard let idMatch = installationIdMatch ?? objectIdMatch else {
            if objectId == nil, deviceType == nil {
                throw ParseError(.missingRequiredField, "deviceType must be specified in this operation")
            }
            // Known by its device token only.
            if deviceTokenMatches.isEmpty { return objectId }
            if deviceTokenMatches.count == 1, deviceTokenMatches[0].installationId == nil || installationId == nil {
                return deviceTokenMatches[0].objectId
            }
            guard let bodyInstallationId, let deviceToken else {
                throw ParseError(.installationIdRequired, "Must specify installationId when deviceToken matches multiple Installation objects")
            }
            // A new installation takes the token over from the others.
            try deleteOthers(deviceToken: deviceToken, keepingInstallationId: bodyInstallationId, keepingObjectId: nil, appIdentifier: body["appIdentifier"])
            return objectId
        }
        if deviceTokenMatches.count == 1, deviceTokenMatches[0].installationId == nil, deviceTokenMatches[0].objectId != idMatch.objectId {
            // The one merge: the token's record, which has no installationId, absorbs the id's record.
            // (Parse also "merges" a record with itself — deleting it, then failing the update with
            // 101 — when the REST guide's PUT repeats a token-only installation's token; Roost updates it.)
            try delete([idMatch.objectId])
            return deviceTokenMatches[0].objectId
        }
        if let deviceToken, idMatch.deviceToken != deviceToken {
            // The token moved to this installation: clear it from the others, when they can be told apart.
            if let bodyInstallationId {
                try deleteOthers(deviceToken: deviceToken, keepingInstallationId: bodyInstallationId, keepingObjectId: nil, appIdentifier: body["appIdentifier"])
            } else if case .string(idMatch.objectId)? = body["objectId"] {
                try deleteOthers(deviceToken: deviceToken, keepingInstallationId: nil, keepingObjectId: idMatch.objectId, appIdentifier: body["appIdentifier"])
            }
        }
        return idMatch.objectId
    }

    /// Parse compares an operation on an identifying field (`{"__op": "Delete"}`) as a value, which
    /// never equals the stored one: such an update is refused (136) where a new value would be.
    private func refuseOperations(on body: [String: JSON], of objectId: String) throws {
        let operated = ["installationId", "deviceToken", "deviceType"].filter { key in
            guard let value = body[key] else { return false }
            return value != .null && value != "" && value.nonEmptyString == nil
        }
        guard !operated.isEmpty else { return }
        guard let stored = try candidates(objectId: objectId, installationId: nil, deviceToken: nil).first else {
            throw ParseError(.objectNotFound, "Object not found for update.")
        }
        for key in operated {
            let refused = switch key {
            case "installationId": stored.installationId != nil
            case "deviceToken": stored.deviceToken != nil && stored.installationId == nil && body["installationId"]?.nonEmptyString == nil
            default: true
            }
            if refused { throw ParseError(.invalidInstallationId, "\(key) may not be changed in this operation") }
        }
    }

    /// The installations that share the save's objectId, installationId or device token.
    private func candidates(objectId: String?, installationId: String?, deviceToken: String?) throws -> [Stored] {
        let rows = try db.fetchRows("""
            SELECT objectId, json_extract(data, '$.installationId'), json_extract(data, '$.deviceToken'),
                json_extract(data, '$.deviceType'), json_extract(data, '$.appIdentifier')
            FROM \(schema.tableName)
            WHERE objectId = ?1 OR json_extract(data, '$.installationId') = ?2 OR json_extract(data, '$.deviceToken') = ?3
            """, [argument(objectId), argument(installationId), argument(deviceToken)], cacheable: true)
        return rows.compactMap { row in
            guard let objectId = row[0].text else { return nil }
            return Stored(objectId: objectId, installationId: row[1].text, deviceToken: row[2].text, deviceType: row[3].text,
                          appIdentifier: row[4].text)
        }
    }

    /// Deletes the other installations holding `deviceToken` (those of the same app, when the body names one).
    private func deleteOthers(deviceToken: String, keepingInstallationId: String?, keepingObjectId: String?, appIdentifier: JSON?) throws {
        let appIdentifier = appIdentifier?.nonEmptyString
        let others = try candidates(objectId: nil, installationId: nil, deviceToken: deviceToken).filter { stored in
            if let keepingInstallationId, stored.installationId == keepingInstallationId { return false }
            if let keepingObjectId, stored.objectId == keepingObjectId { return false }
            return appIdentifier == nil || stored.appIdentifier == appIdentifier
        }
        try delete(others.map(\.objectId))
    }

    private func delete(_ objectIds: [String]) throws {
        for objectId in objectIds {
            _ = try ObjectStore.delete(objectId, from: schema, in: db)
            try RelationStore.deleteAll(className: InstallationRoutes.className, objectId: objectId, in: db)
        }
    }

    private func argument(_ text: String?) -> SQLValue { text.map(SQLValue.text) ?? .null }

}
