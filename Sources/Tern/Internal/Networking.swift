// The one place that says where URLSession and friends come from: Foundation on Apple platforms,
// FoundationNetworking on Linux. Every other file imports Foundation and gets these through here.
#if canImport(FoundationNetworking)
@_exported import FoundationNetworking
#endif
