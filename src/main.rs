fn main() -> std::process::ExitCode {
    hashmark::cli::run()
}
