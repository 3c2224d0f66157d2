#pragma once
// FailureBanner: a non-modal strip above the live view that says why a run failed and what to
// try next; dismissable, and the rest of the window stays usable.

#include <QFrame>

class QLabel;

namespace hearth::ui {

class FailureBanner final : public QFrame {
    Q_OBJECT

public:
    explicit FailureBanner(QWidget* parent = nullptr);

    void showProblem(const QString& title, const QString& message, const QString& suggestion = {});
    QString message() const;
    QString suggestion() const;

private:
    QLabel* m_title;
    QLabel* m_message;
    QLabel* m_suggestion;
};

}  // namespace hearth::ui
