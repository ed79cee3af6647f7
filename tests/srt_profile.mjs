// srt_profile.mjs SETTINGS.json: print the Seatbelt profile srt builds for a settings file,
// with srt's own code (its SandboxManager, as `srt -s SETTINGS` runs it), on any platform:
// process.platform is set to darwin before srt is loaded, so it takes its macOS path and
// returns `env ... /usr/bin/sandbox-exec -p PROFILE bash -c true`, from which PROFILE is
// taken. The cwd and HOME are the caller's (srt resolves `.` and `~` against them).
// SRT_PKG names the package directory (default: npm's global one). Exit 3, saying why,
// when srt cannot be loaded or is not the version the oracle was written against.
import * as fs from 'fs';
import { execFileSync } from 'child_process';

const WANT = process.env.SRT_VERSION ?? '0.0.81';
const INSTALL = `npm install -g @anthropic-ai/sandbox-runtime@${WANT}`;
function die(why) {
	process.stderr.write(`srt_profile: ${why}\n`);
	process.exit(3);
}

let pkg = process.env.SRT_PKG;
if (!pkg) {
	try {
		pkg = execFileSync('npm', ['root', '-g'], { encoding: 'utf8' }).trim() +
			'/@anthropic-ai/sandbox-runtime';
	} catch (e) {
		die(`npm root -g failed (${e.message}); set SRT_PKG to srt's package directory`);
	}
}
let version;
try {
	version = JSON.parse(fs.readFileSync(pkg + '/package.json', 'utf8')).version;
} catch (e) {
	die(`${pkg}/package.json: ${e.message} (${INSTALL})`);
}
if (version !== WANT)
	die(`${pkg} is srt ${version}, not ${WANT} (${INSTALL})`);

Object.defineProperty(process, 'platform', { value: 'darwin' });
let SandboxManager, loadConfig;
try {
	({ SandboxManager } = await import(pkg + '/dist/index.js'));
	({ loadConfig } = await import(pkg + '/dist/utils/config-loader.js'));
} catch (e) {
	die(`loading srt from ${pkg}/dist: ${e.message}`);
}
const loaded = loadConfig(process.argv[2]);
if (loaded.kind !== 'ok')
	die(`${process.argv[2]}: srt refuses it: ${loaded.reason ?? loaded.kind}`);
let wrapped;
try {
	await SandboxManager.initialize(loaded.config);
	wrapped = await SandboxManager.wrapWithSandbox('true');
} catch (e) {
	die(`srt's wrapWithSandbox: ${e.stack ?? e}`);
}
process.stdout.write(wrapped + '\n');
process.exit(0);
