import Access

extension ServeOptions {
    /// `--auth` and the `--jwt-*` flags: `--auth jwt` needs `--jwt-jwks`; the `--jwt-*` flags need `--auth jwt`.
    func accessSettings(resolver: SettingResolver) throws(ConfigurationError) -> AccessSettings {
        let defaults = AccessSettings()
        let options = access
        var settings = AccessSettings(
            mode: try resolver.value(options.auth, flag: "--auth", default: defaults.mode, format: .authMode),
            jwks: try resolver.value(options.jwks, flag: "--jwt-jwks", default: nil, format: .optionalText(example: "/etc/unicache/jwks.json or https://id.example/.well-known/jwks.json")),
            jwksRefresh: try resolver.value(
                options.jwksRefresh, flag: "--jwt-jwks-refresh", default: defaults.jwksRefresh,
                format: .duration(example: "10m", aboveZero: true)),
            issuer: try resolver.value(options.issuer, flag: "--jwt-issuer", default: nil, format: .optionalText(example: "https://id.example")),
            audience: try resolver.value(options.audience, flag: "--jwt-audience", default: nil, format: .optionalText(example: "unicache")),
            leeway: try resolver.value(
                options.leeway, flag: "--jwt-leeway", default: defaults.leeway, format: .duration(example: "60s", aboveZero: false)))
        settings.userClaim = try resolver.value(
            options.userClaim, flag: "--jwt-user-claim", default: defaults.userClaim, format: .optionalText(example: "sub")) ?? defaults.userClaim
        if settings.mode == .jwt, settings.jwks == nil {
            let audience = settings.audience == nil ? " and --jwt-audience AUDIENCE, which it needs too" : ""
            throw ConfigurationError(
                message: "--jwt-jwks: --auth jwt needs the verification keys (a JWKS file or an http(s) URL, e.g. "
                    + "--jwt-jwks /etc/unicache/jwks.json)\(audience): \(AccessSettings.jwtFlags)")
        }
        if settings.mode != .jwt, settings.jwks != nil {
            let audience = settings.audience == nil ? " and --jwt-audience AUDIENCE" : ""
            throw ConfigurationError(
                message: "--jwt-jwks: the keys are used only with --auth jwt (add --auth jwt\(audience), or drop --jwt-jwks)")
        }
        if settings.mode == .jwt {
            // RFC 8725 §3.9: without an audience, a token minted for any other API of the issuer is accepted here.
            guard let audience = settings.audience else {
                throw ConfigurationError(
                    message: "--jwt-audience: --auth jwt needs the audience its tokens are minted for (the API identifier "
                        + "your identity provider puts in aud, e.g. --jwt-audience https://api.example/unicache), or "
                        + "--jwt-audience any to accept tokens minted for any API of the issuer")
            }
            if audience == AccessSettings.anyAudience { settings.audience = nil }
        }
        return settings
    }
}

extension ValueFormat where Value == AccessSettings.Mode {
    /// `none` or `jwt`; protected mode is chosen by leaving `--auth` unset.
    static var authMode: Self {
        ValueFormat(
            kind: "an auth mode", form: "use none or jwt; leave it unset for protected mode (loopback clients only)",
            parse: { text in
                let mode = AccessSettings.Mode(rawValue: text.lowercased())
                return mode == .protected ? nil : mode
            })
    }
}

extension ValueFormat where Value == String? {
    /// Any non-blank text without control characters.
    static func optionalText(example: String) -> Self {
        ValueFormat(
            kind: "a value", form: "use non-blank text without control characters, e.g. \(example)",
            parse: { text in text.isEmpty || text.unicodeScalars.contains { $0.value < 0x20 } ? nil : .some(text) })
    }
}
