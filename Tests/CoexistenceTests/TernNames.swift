import Tern

// One file of the app says which library the everyday names mean; every other file of the module
// then uses them unqualified, whatever else it imports (declarations of the module itself win
// over imported ones). The rest stay qualified where both libraries are imported. The migration
// guide shows this file.

// TernNames.swift, in your app: every file of the module now reads these as Tern's
typealias Request<Value: Sendable> = Tern.Request<Value>
typealias Response<Value: Sendable> = Tern.Response<Value>
typealias HTTPMethod = Tern.HTTPMethod
