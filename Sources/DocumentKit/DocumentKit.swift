public let documentKitVersion = "0.1.0"
