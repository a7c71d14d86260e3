import Foundation
import MicroHTTPServer
import Sealing

extension ServeOptions {
    /// `--tls-cert` and `--tls-key` (CONTRACT §8.7): both or neither; each file read and the pair checked as
    /// libmicrohttpd will load it, so that a missing, unreadable, malformed or mismatched pair stops start-up with
    /// one line naming the flag. No error shows a byte of either file.
    static func tlsCredentials(
        certificate: String?, key: String?, resolver: SettingResolver
    ) throws(ConfigurationError) -> TLSCredentials? {
        let certificateSetting = resolver.text(flag: certificate, named: "--tls-cert")
        let keySetting = resolver.text(flag: key, named: "--tls-key")
        let pair = "set both --tls-cert and --tls-key (PEM files), or neither for plain HTTP"
        switch (certificateSetting, keySetting) {
        case (nil, nil):
            return nil
        case (let given?, nil):
            throw ConfigurationError(message: "\(given.source): given without --tls-key (\(pair))")
        case (nil, let given?):
            throw ConfigurationError(message: "\(given.source): given without --tls-cert (\(pair))")
        case (let certificate?, let key?):
            let form = "expected a PEM certificate chain, leaf first, e.g. from `openssl req -x509`"
            let keyForm = "expected the certificate's unencrypted PEM private key"
            let chainText = try pemFile(certificate, form: form)
            let keyText = try secretPEMFile(key, form: keyForm)
            do {
                return try TLSCredentials(certificateChainPEM: chainText, privateKeyPEM: keyText)
            } catch {
                let file = ConfigurationError.quoted(certificate.text)
                let keyFile = ConfigurationError.quoted(key.text)
                switch error {
                case .certificate:
                    throw ConfigurationError(message: "\(certificate.source): \(file) is \(error) (\(form))")
                case .privateKey:
                    throw ConfigurationError(message: "\(key.source): \(keyFile) is \(error) (\(keyForm))")
                case .mismatch:
                    throw ConfigurationError(
                        message: "\(key.source): \(keyFile) does not fit \(certificate.source) \(file): \(error) (\(keyForm))")
                case .unsupported:
                    throw ConfigurationError(message: "\(certificate.source): \(error)")
                }
            }
        }
    }

    /// The text of a PEM file holding a private key: refused, like a key ring, when its group or others may read
    /// it (CONTRACT §8.9).
    static func secretPEMFile(_ setting: (text: String, source: String), form: String) throws(ConfigurationError) -> String {
        let path = ConfigurationError.quoted(setting.text)
        let bytes: [UInt8]
        do {
            bytes = try SecretFile.contents(of: setting.text, limit: 1 << 20)
        } catch {
            switch error {
            case .tooOpen(let mode):
                throw ConfigurationError(
                    message: "\(setting.source): \(path) has mode \(mode): its group or others may read the private key "
                        + "(chmod 600 \(setting.text), as OpenSSH requires of private keys)")
            case .unreadable(let reason):
                throw ConfigurationError(message: "\(setting.source): cannot read \(path): \(reason) (\(form))")
            case .notRegularFile:
                throw ConfigurationError(message: "\(setting.source): cannot read \(path): it is not a regular file (\(form))")
            case .tooLarge:
                throw ConfigurationError(message: "\(setting.source): \(path) is larger than 1 MiB (\(form))")
            }
        }
        guard let text = String(validating: bytes, as: UTF8.self), !bytes.contains(0) else {
            throw ConfigurationError(
                message: "\(setting.source): \(path) is not PEM text (a DER file? convert it with openssl) (\(form))")
        }
        return text
    }

    /// The text of a PEM file named by a setting (at most 1 MiB).
    static func pemFile(_ setting: (text: String, source: String), form: String) throws(ConfigurationError) -> String {
        let path = setting.text
        let problem: String
        var isDirectory: ObjCBool = false
        if !FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) {
            problem = "there is no such file"
        } else if isDirectory.boolValue {
            problem = "it is a directory"
        } else if let data = FileManager.default.contents(atPath: path) {
            guard data.count <= 1 << 20 else {
                throw ConfigurationError(message: "\(setting.source): \(ConfigurationError.quoted(path)) is larger than 1 MiB (\(form))")
            }
            if let text = String(data: data, encoding: .utf8), !text.utf8.contains(0) { return text }
            throw ConfigurationError(
                message: "\(setting.source): \(ConfigurationError.quoted(path)) is not PEM text (a DER file? convert it with openssl) (\(form))")
        } else {
            problem = "it cannot be read (check its permissions)"
        }
        throw ConfigurationError(message: "\(setting.source): cannot read \(ConfigurationError.quoted(path)): \(problem) (\(form))")
    }
}
