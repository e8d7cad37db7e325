/// Foundation's name for ``FileVersion``, so that code written for Apple platforms ports unchanged.
public typealias NSFileVersion = FileVersion
