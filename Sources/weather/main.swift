import Tern
print("Tern \(Client.version)")
