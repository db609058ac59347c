import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The same mix through a raw `URLSession` with completion handlers and no delegate (URLSession
/// then follows redirects itself): the baseline for the RSS growth.
final class RawRunner: Sendable {
    let base: String
    let session: URLSession

    init(base: String) {
        self.base = base
        let configuration = URLSessionConfiguration.default
        configuration.urlCache = nil
        configuration.httpMaximumConnectionsPerHost = 64
        session = URLSession(configuration: configuration)
    }

    func start(_ job: Job, canceller: DispatchQueue, ended: @escaping @Sendable (String) -> Void) {
        // Two faults raw URLSession cannot survive: a 401 Basic without credentials hangs it for
        // good on Linux, and a 2 GB body has no limit to stop it. Counted, not sent.
        if job.limit != nil || job.path.hasPrefix("/basic-401") {
            ended("skipped (would hang or exhaust memory)")
            return
        }
        var request = URLRequest(url: URL(string: base + job.path)!)
        request.httpMethod = job.method
        request.httpBody = job.body
        request.setValue("Bearer soak", forHTTPHeaderField: "Authorization")
        request.timeoutInterval = max(1, (job.timeout ?? 30).rounded(.up))
        let task = session.dataTask(with: request) { _, response, error in
            if let error = error as? URLError {
                ended("URLError \(error.code.rawValue)")
            } else {
                ended("\((response as? HTTPURLResponse)?.statusCode ?? 0)")
            }
        }
        task.resume()
        if let delay = job.cancelAfter { canceller.asyncAfter(deadline: .now() + delay) { task.cancel() } }
    }
}
