import Foundation
import GroupSyncCore
import GroupSyncTransport
import XCTest

final class DeviceCertificateTests: XCTestCase {
    func testDeviceIDIsTheOpenSSLSHA256Fingerprint() throws {
        let identity = try DeviceCertificate.generate(commonName: "test-device")
        let output = try OpenSSLTool.run(["x509", "-noout", "-fingerprint", "-sha256"], input: identity.certificatePEM)
        // "sha256 Fingerprint=AB:CD:..." (the prefix's case differs between OpenSSL versions)
        let hex = try XCTUnwrap(output.split(separator: "=").last).trimmingCharacters(in: .whitespacesAndNewlines)
        let bytes = hex.split(separator: ":").map { UInt8($0, radix: 16)! }
        XCTAssertEqual(try DeviceID(bytes: bytes), identity.deviceID)
    }

    func testGeneratedCertificateIsSelfSignedV3Ed25519() throws {
        let identity = try DeviceCertificate.generate(commonName: "laptop")
        let text = try OpenSSLTool.run(["x509", "-noout", "-text"], input: identity.certificatePEM)
        XCTAssertTrue(text.contains("Version: 3"), text)
        XCTAssertTrue(text.contains("ED25519"), text)
        XCTAssertTrue(text.contains("CN = laptop"), text)
        XCTAssertTrue(identity.privateKeyPEM.hasPrefix("-----BEGIN PRIVATE KEY-----"))
        let enddate = try OpenSSLTool.run(["x509", "-noout", "-checkend", String(19 * 365 * 24 * 3600)],
                                          input: identity.certificatePEM)
        XCTAssertTrue(enddate.contains("will not expire"), enddate)
    }

    func testTwoGenerationsDiffer() throws {
        let a = try DeviceCertificate.generate()
        let b = try DeviceCertificate.generate()
        XCTAssertNotEqual(a.deviceID, b.deviceID)
    }

    func testRoundTripThroughPEM() throws {
        let identity = try DeviceCertificate.generate()
        let loaded = try DeviceCertificate(certificatePEM: identity.certificatePEM, privateKeyPEM: identity.privateKeyPEM)
        XCTAssertEqual(loaded.deviceID, identity.deviceID)
        XCTAssertEqual(loaded, identity)
    }

    func testMismatchedKeyIsRefused() throws {
        let a = try DeviceCertificate.generate()
        let b = try DeviceCertificate.generate()
        XCTAssertThrowsError(try DeviceCertificate(certificatePEM: a.certificatePEM, privateKeyPEM: b.privateKeyPEM)) {
            XCTAssertEqual($0 as? TransportError, .keyDoesNotMatchCertificate)
        }
    }

    /// Only Ed25519: the TLS context signs with nothing else, so another key would load and then fail every
    /// handshake with misleading errors on both sides.
    func testANonEd25519IdentityIsRefused() throws {
        let folder = NSTemporaryDirectory() + "gs-ecdsa-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        _ = try OpenSSLTool.run(["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
                                 "-keyout", folder + "/key.pem", "-out", folder + "/cert.pem", "-subj", "/CN=ecdsa", "-days", "1"], input: "")
        let certificate = try String(contentsOfFile: folder + "/cert.pem", encoding: .utf8)
        let key = try String(contentsOfFile: folder + "/key.pem", encoding: .utf8)
        XCTAssertThrowsError(try DeviceCertificate(certificatePEM: certificate, privateKeyPEM: key)) {
            guard case .notAPEMPrivateKey(let detail) = $0 as? TransportError else { return XCTFail("\($0)") }
            XCTAssertTrue(detail.contains("Ed25519"), detail)
        }
    }

    func testGarbageIsRefused() throws {
        let good = try DeviceCertificate.generate()
        let garbage = [
            "", "hello", "-----BEGIN CERTIFICATE-----\nnot base64 !!!\n-----END CERTIFICATE-----\n",
            String(good.certificatePEM.prefix(80)), good.privateKeyPEM,
        ]
        for text in garbage {
            XCTAssertThrowsError(try DeviceCertificate(certificatePEM: text, privateKeyPEM: good.privateKeyPEM)) {
                guard case .notAPEMCertificate = $0 as? TransportError else { return XCTFail("\($0)") }
                XCTAssertTrue("\($0)".contains("certificate file is not a PEM certificate"))
            }
        }
        for text in ["", "hello", String(good.privateKeyPEM.dropLast(30)), good.certificatePEM] {
            XCTAssertThrowsError(try DeviceCertificate(certificatePEM: good.certificatePEM, privateKeyPEM: text)) {
                guard case .notAPEMPrivateKey = $0 as? TransportError else { return XCTFail("\($0)") }
            }
        }
    }

    func testTamperedCertificateIsRefused() throws {
        let good = try DeviceCertificate.generate(commonName: "aaaaaaaa")
        // Re-encode the DER with one byte of the name changed: still parses, signature no longer matches.
        let body = good.certificatePEM.split(separator: "\n").filter { !$0.hasPrefix("-----") }.joined()
        var der = try XCTUnwrap(Data(base64Encoded: body))
        let name = Data("aaaaaaaa".utf8)
        let range = try XCTUnwrap(der.range(of: name))
        der[range.lowerBound] = UInt8(ascii: "b")
        let pem = "-----BEGIN CERTIFICATE-----\n" + der.base64EncodedString(options: .lineLength64Characters)
            + "\n-----END CERTIFICATE-----\n"
        XCTAssertThrowsError(try DeviceCertificate(certificatePEM: pem, privateKeyPEM: good.privateKeyPEM)) {
            XCTAssertEqual($0 as? TransportError, .certificateSignatureInvalid)
        }
    }
}
