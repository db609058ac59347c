/// The library version (`Client.version`), sent in the default `User-Agent`.
let ternVersion = "0.10.0"
