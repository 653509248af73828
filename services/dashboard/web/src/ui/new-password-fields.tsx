// A new password and its repetition (the set-password and invitation pages): `password` and `confirm` in
// the form, at least MIN_PASSWORD characters, the rule said under the first.

export const MIN_PASSWORD = 10;

export function NewPasswordFields({ label }: { label: string }) {
  return (
    <>
      <label>
        {label}
        <input
          name="password"
          type="password"
          autocomplete="new-password"
          minLength={MIN_PASSWORD}
          required
          autofocus
          aria-describedby="password-rule"
        />
      </label>
      <p id="password-rule" class="hint">
        At least {MIN_PASSWORD} characters.
      </p>
      <label>
        Repeat it
        <input name="confirm" type="password" autocomplete="new-password" minLength={MIN_PASSWORD} required />
      </label>
    </>
  );
}
