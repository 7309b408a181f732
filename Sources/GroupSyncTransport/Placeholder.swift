// Device certificates and TLS; see DeviceCertificate.swift.
