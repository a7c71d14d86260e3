/// The release this build is (`unicache --version`, the start-up log, `/stats` `version`); CHANGELOG.md says what
/// each release changed.
public enum UnicacheVersion {
    public static let current = "0.5.0"
}
